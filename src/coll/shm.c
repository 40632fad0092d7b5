/* Host collectives through shared memory, for teams whose members all run on one node (MPI's
 * own collective beat the message schedules on one node, whose every step pays MPI's matching and locks).
 *
 * Segment (POSIX shm, made by team rank 0 at the team's first host collective, opened by the others,
 * unlinked once all have it): one cache line per member holding its arrival counter, then two areas by
 * parity, each a slot of KY_COLL_SHM_SLOT bytes per member.
 *
 * Protocol. A collective is a series of rounds; in a round every member copies its part into its slot of
 * the round's area, publishes by storing the next value of its counter (release), waits until every
 * member's counter reached that value (acquire), then reads the slots it needs. Counters only grow, and
 * every member runs the same rounds in the same order (collectives of a team are called in one order), so
 * a value names one round everywhere. Areas alternate by round: a member rewrites the area of round k at
 * round k+2, after it saw every member arrive in round k+1, so every member had finished reading round k.
 * Two-shot rounds publish twice (inputs, then each member's reduced share, written into its own slot:
 * nobody else reads that part of it) and read the shares after the second arrival.
 *
 * Single copy (KY_COLL_SHM_CMA). Allgather, bcast and reduce of at least that many bytes per member skip
 * the slots: each member publishes the address of its input in its cache line and arrives, every reader
 * copies straight from the other processes' buffers into its output with process_vm_readv (cross-memory
 * attach, what Open MPI's vader uses; a reduce's root reads and reduces chunk by chunk), then all arrive
 * again so nobody reuses an input that is still being read. Through the slots the bytes are copied twice;
 * MPI's single copy made it 1.6-2x faster from 8 KiB on. Whether the kernel lets the members read each other
 * (ptrace rules, containers) is tried once at set-up; if any member cannot, the team keeps the slots.
 *
 * Results are bitwise the same on every member: reductions run in member order 0..p-1. Waits spin with
 * polls (yielding when ranks outnumber cores), then back off through the runtime's waiters, bounded by
 * KY_TIMEOUT with the member waited for in the message; without a progress thread they keep serving
 * one-sided requests. Plans queue at start and run, in start order, when one of them is waited for or a
 * blocking collective of the team comes: starts never wait, and members that wait in another order still
 * run the same rounds in the same order. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "coll/shm.h"
#include "comm/chan.h"
#include "runtime/config.h"
#include "runtime/log.h"

enum { LINE = 64 };

struct kyi_shm {
    char *base;
    size_t bytes, slot, hdr;
    int p, me;
    uint64_t arrivals;                 /* this member's counter (the value last published) */
    uint64_t rounds;                   /* rounds run: the parity of the next one */
    char *tmp;                         /* a two-shot member's reduced share, before it goes into its slot */
    char *tmp2;                        /* single-copy reduce: an in-place root's own chunk */
    size_t cma_min;                    /* single copy from this many bytes per member; 0: never */
    int64_t probe;                     /* what the others read from this process to test single copy */
    struct kyi_coll_plan *head, *tail; /* started plans not yet run */
};

static _Atomic uint64_t *counter(struct kyi_shm *s, int j)
{
    return (_Atomic uint64_t *)(s->base + (size_t)j * LINE);
}
/* The rest of member j's line: its pid and the address of its input of the current single-copy op. */
static int64_t *line_pid(struct kyi_shm *s, int j)
{
    return (int64_t *)(s->base + (size_t)j * LINE + 8);
}
static uintptr_t *line_addr(struct kyi_shm *s, int j)
{
    return (uintptr_t *)(s->base + (size_t)j * LINE + 16);
}

/* n bytes of member j's memory at addr into dst; KY_OK or -errno. */
static int cma_read(struct kyi_shm *s, int j, void *dst, uintptr_t addr, size_t n)
{
    while (n) {
        struct iovec l = {dst, n}, r = {(void *)addr, n};
        ssize_t got = process_vm_readv((pid_t)*line_pid(s, j), &l, 1, &r, 1, 0);
        if (got <= 0) return got < 0 ? -errno : -EIO;
        dst = (char *)dst + got, addr += (size_t)got, n -= (size_t)got;
    }
    return KY_OK;
}
static char *slot(struct kyi_shm *s, uint64_t round, int j)
{
    return s->base + s->hdr + ((size_t)(round & 1) * (size_t)s->p + (size_t)j) * s->slot;
}

/* ---- set-up ------------------------------------------------------------------------------------------- */

/* Every member on this rank's logical node and physical host (KY_NODE_SPLIT=rank makes each rank a node). */
static int one_node(struct kyi_team *t)
{
    int me = kyi_rt.rank;
    for (int j = 0; j < t->size; j++) {
        int w = t->world[j];
        if (kyi_rt.node_of[w] != kyi_rt.node_of[me] || kyi_rt.hw_node_of[w] != kyi_rt.hw_node_of[me])
            return 0;
    }
    return 1;
}

static size_t slot_bytes(void)
{
    size_t v = kyi_setting_size(KYI_SET_COLL_SHM_SLOT);
    if (v < 4096) v = 4096;
    return (v + LINE - 1) / LINE * LINE;
}

static void unmap(struct kyi_shm *s)
{
    if (!s) return;
    if (s->base) munmap(s->base, s->bytes);
    free(s->tmp);
    free(s->tmp2);
    free(s);
}

/* Collective over t: *out is the mapped segment, or NULL when some member could not take part. */
static int create(const char *call, struct kyi_team *t, struct kyi_shm **out)
{
    static atomic_int made;
    *out = NULL;
    struct kyi_shm *s = calloc(1, sizeof *s);
    int64_t v[3] = {s != NULL, t->rank == 0 ? (int64_t)getpid() : INT64_MAX,
                    t->rank == 0 ? (int64_t)atomic_fetch_add(&made, 1) : INT64_MAX};
    size_t sl = slot_bytes();
    char name[64];
    int fd = -1;
    if (s) {
        s->p = t->size;
        s->me = t->rank;
        s->slot = sl;
        s->hdr = ((size_t)t->size * LINE + 4095) / 4096 * 4096;
        s->bytes = s->hdr + 2 * (size_t)t->size * sl;
        s->tmp = malloc(sl);
        s->tmp2 = malloc(sl);
        if (!s->tmp || !s->tmp2) v[0] = 0;
    }
    if (t->rank == 0 && v[0]) {
        snprintf(name, sizeof name, "/kyoyu-coll-%lld-%lld", (long long)v[1], (long long)v[2]);
        fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd < 0 || ftruncate(fd, (off_t)s->bytes) != 0) v[0] = 0;
    }
    KYI_CHECK(kyi_allreduce_min_i64(t, v, 3, call)); /* everybody learns rank 0's name and success */
    snprintf(name, sizeof name, "/kyoyu-coll-%lld-%lld", (long long)v[1], (long long)v[2]);
    int64_t ok = v[0];
    if (ok && t->rank != 0) {
        fd = shm_open(name, O_RDWR, 0600);
        if (fd < 0) ok = 0;
    }
    if (ok) {
        void *m = mmap(NULL, s->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED)
            ok = 0;
        else
            s->base = m;
    }
    if (fd >= 0) close(fd);
    if (ok) { /* for the single-copy test below */
        s->probe = 0x4b796f7975 + s->me;
        *line_pid(s, s->me) = (int64_t)getpid();
        *line_addr(s, s->me) = (uintptr_t)&s->probe;
    }
    int st = kyi_allreduce_min_i64(t, &ok, 1, call); /* everybody mapped it (or not) */
    if (t->rank == 0 && v[0]) shm_unlink(name);
    if (st || !ok) {
        unmap(s);
        if (!st)
            KYI_INFO(KYI_SUB_COLL, "%s: no shared-memory segment for a team of %d; MPI schedules", call,
                     t->size);
        return st;
    }
    /* Single copy only if every member can read every other one's memory (the kernel may refuse). */
    int64_t cma = (int64_t)kyi_setting_size(KYI_SET_COLL_SHM_CMA);
    for (int j = 0; j < s->p && cma; j++) {
        int64_t got = 0;
        if (j != s->me &&
            (cma_read(s, j, &got, *line_addr(s, j), sizeof got) != KY_OK || got != 0x4b796f7975 + j))
            cma = 0;
    }
    int64_t want = cma ? 1 : 0;
    st = kyi_allreduce_min_i64(t, &want, 1, call);
    if (st) {
        unmap(s);
        return st;
    }
    s->cma_min = want ? (size_t)cma : 0;
    if (!want && cma)
        KYI_INFO(KYI_SUB_COLL, "%s: process_vm_readv between the members is refused: no single copy", call);
    KYI_INFO(KYI_SUB_COLL, "%s: shared-memory collectives for a team of %d (%zu bytes; single copy %s)", call,
             t->size, s->bytes, s->cma_min ? "on" : "off");

    *out = s;
    return KY_OK;
}

int kyi_shm_usable(const char *call, struct kyi_team *t, int *yes)
{
    *yes = 0;
    if (t->size < 2) return KY_OK;
    if (t->shm_state == 0) {
        int64_t v = kyi_setting_long(KYI_SET_COLL_SHM) != 0 && one_node(t);
        KYI_CHECK(kyi_allreduce_min_i64(t, &v, 1, call));
        struct kyi_shm *s = NULL;
        if (v) KYI_CHECK(create(call, t, &s));
        t->shm = s;
        t->shm_state = s ? 1 : -1;
    }
    *yes = t->shm_state == 1;
    return KY_OK;
}

void kyi_shm_team_free(struct kyi_team *t)
{
    unmap(t->shm); /* the others keep their own mappings; the memory goes with the last one */
    t->shm = NULL;
    t->shm_state = 0;
}

/* ---- rounds ------------------------------------------------------------------------------------------- */

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Publish this member's arrival and wait for everybody's. */
static void arrive(struct kyi_shm *s, struct kyi_team *t, const char *call)
{
    uint64_t v = ++s->arrivals;
    atomic_store_explicit(counter(s, s->me), v, memory_order_release);
    int j = 0;
    static long yield_us = -1;
    if (yield_us < 0) yield_us = kyi_setting_long(KYI_SET_COLL_YIELD_US);
    uint64_t until = 0;
    kyi_waiter_t w;
    int waiting = 0;
    for (; j < s->p; j++) {
        unsigned spins = 0;
        while (atomic_load_explicit(counter(s, j), memory_order_acquire) < v) {
            if (!kyi_progress_threaded() && (++spins & 63u) == 0) kyi_progress_poll();
            if (!until) until = kyi_now_ns() + (uint64_t)(yield_us > 0 ? yield_us : 0) * 1000ull;
            if (kyi_now_ns() < until) {
                if (kyi_rt.oversubscribed)
                    sched_yield();
                else
                    cpu_relax();
                continue;
            }
            if (!waiting) {
                kyi_waiter_init(&w, call, "the arrival in a shared-memory collective", t->world[j]);
                waiting = 1;
            }
            w.peer = t->world[j];
            kyi_waiter_pause(&w);
        }
    }
}

/* Elements of `es` bytes: the part [lo, hi) of member i when n elements are cut into p parts. */
static void part(size_t n, int p, int i, size_t *lo, size_t *hi)
{
    *lo = n * (size_t)i / (size_t)p;
    *hi = n * (size_t)(i + 1) / (size_t)p;
}

/* Allreduce (root < 0) or reduce to root of n elements, in rounds of at most one slot. */
static void reduce_rounds(struct kyi_shm *s, struct kyi_team *t, struct kyi_coll_plan *pl, int root)
{
    size_t es = kyi_dtype_size(pl->dtype), per = s->slot / es, n = pl->shm_n;
    const char *in = pl->shm_s ? pl->shm_s : pl->shm_r;
    char *out = (root < 0 || s->me == root) ? pl->shm_r : NULL;
    static size_t oneshot_max = (size_t)-1;
    if (oneshot_max == (size_t)-1) oneshot_max = kyi_setting_size(KYI_SET_COLL_SHM_ONESHOT_MAX);
    for (size_t off = 0; off < n; off += per) {
        size_t m = n - off < per ? n - off : per, b = m * es;
        uint64_t rd = s->rounds++;
        memcpy(slot(s, rd, s->me), in + off * es, b);
        arrive(s, t, pl->call);
        if (s->p == 2 || b <= oneshot_max) {
            /* one-shot: everybody reduces everything, in member order */
            if (out) {
                char *o = out + off * es;
                memcpy(o, slot(s, rd, 0), b);
                for (int j = 1; j < s->p; j++) kyi_reduce_local(o, slot(s, rd, j), m, pl->dtype, pl->op);
            }
            continue;
        }
        /* two-shot: my share [lo, hi) reduced over every slot, put back into my slot, then everybody's */
        size_t lo, hi;
        part(m, s->p, s->me, &lo, &hi);
        if (hi > lo) {
            memcpy(s->tmp, slot(s, rd, 0) + lo * es, (hi - lo) * es);
            for (int j = 1; j < s->p; j++)
                kyi_reduce_local(s->tmp, slot(s, rd, j) + lo * es, hi - lo, pl->dtype, pl->op);
            memcpy(slot(s, rd, s->me) + lo * es, s->tmp, (hi - lo) * es);
        }
        arrive(s, t, pl->call);
        if (out)
            for (int j = 0; j < s->p; j++) {
                part(m, s->p, j, &lo, &hi);
                if (hi > lo) memcpy(out + (off + lo) * es, slot(s, rd, j) + lo * es, (hi - lo) * es);
            }
    }
}

/* Single-copy allgather and bcast (the header comment). The second arrival keeps every input unchanged
 * until all have read it; a failed read still arrives, so no member is left waiting. */
static int cma_fail(struct kyi_coll_plan *pl, int err, int j)
{
    return kyi_fail(KY_ERR_SYSTEM, pl->call, "process_vm_readv from rank %d failed: %s", pl->team->world[j],
                    strerror(-err));
}

static int allgather_cma(struct kyi_shm *s, struct kyi_team *t, struct kyi_coll_plan *pl, const char *mine)
{
    size_t b = pl->shm_n;
    char *r = pl->shm_r;
    int st = KY_OK;
    *line_addr(s, s->me) = (uintptr_t)mine;
    arrive(s, t, pl->call);
    if (r + (size_t)s->me * b != mine) memcpy(r + (size_t)s->me * b, mine, b);
    for (int k = 1; k < s->p && !st; k++) { /* from the next member on, so that not all read one at once */
        int j = (s->me + k) % s->p, e = cma_read(s, j, r + (size_t)j * b, *line_addr(s, j), b);
        if (e) st = cma_fail(pl, e, j);
    }
    arrive(s, t, pl->call);
    return st;
}

static int bcast_cma(struct kyi_shm *s, struct kyi_team *t, struct kyi_coll_plan *pl)
{
    int root = pl->shm_root, st = KY_OK;
    if (s->me == root) *line_addr(s, root) = (uintptr_t)pl->shm_r;
    arrive(s, t, pl->call);
    if (s->me != root) {
        int e = cma_read(s, root, pl->shm_r, *line_addr(s, root), pl->shm_n);
        if (e) st = cma_fail(pl, e, root);
    }
    arrive(s, t, pl->call);
    return st;
}

/* The root reads every member's input straight from its memory, a slot's worth at a time, and reduces in
 * member order into its output (the same bits as the slot path). */
static int reduce_cma(struct kyi_shm *s, struct kyi_team *t, struct kyi_coll_plan *pl, int root)
{
    size_t es = kyi_dtype_size(pl->dtype), n = pl->shm_n, per = s->slot / es;
    const char *in = pl->shm_s ? pl->shm_s : pl->shm_r;
    int st = KY_OK;
    *line_addr(s, s->me) = (uintptr_t)in;
    arrive(s, t, pl->call);
    for (size_t off = 0; s->me == root && off < n && !st; off += per) {
        size_t m = n - off < per ? n - off : per, b = m * es;
        char *o = pl->shm_r + off * es;
        const char *mine = in + off * es;
        if (o == mine && root != 0) { /* in place: member 0's chunk lands on the root's own first */
            memcpy(s->tmp2, mine, b);
            mine = s->tmp2;
        }
        const char *first = NULL; /* member 0's chunk where it is not in o yet (the root is member 0) */
        for (int j = 0; j < s->p && !st; j++) {
            char *into = j == 0 ? o : s->tmp;
            const char *src = mine;
            if (j != s->me) {
                int e = cma_read(s, j, into, *line_addr(s, j) + off * es, b);
                if (e) st = cma_fail(pl, e, j);
                src = into;
            }
            if (st) break;
            if (j == 0) {
                if (src != o) first = src;
            } else if (first) {
                kyi_reduce_local3(o, first, src, m, pl->dtype, pl->op);
                first = NULL;
            } else {
                kyi_reduce_local(o, src, m, pl->dtype, pl->op);
            }
        }
    }
    arrive(s, t, pl->call);
    return st;
}

static int allgather_rounds(struct kyi_shm *s, struct kyi_team *t, struct kyi_coll_plan *pl)
{
    size_t b = pl->shm_n;
    char *r = pl->shm_r;
    const char *mine = pl->shm_s ? pl->shm_s : r + (size_t)s->me * b;
    if (s->cma_min && b >= s->cma_min) return allgather_cma(s, t, pl, mine);
    for (size_t off = 0; off < b; off += s->slot) {
        size_t m = b - off < s->slot ? b - off : s->slot;
        uint64_t rd = s->rounds++;
        memcpy(slot(s, rd, s->me), mine + off, m);
        arrive(s, t, pl->call);
        for (int j = 0; j < s->p; j++) {
            char *d = r + (size_t)j * b + off;
            if (j != s->me)
                memcpy(d, slot(s, rd, j), m);
            else if (d != mine + off)
                memcpy(d, mine + off, m);
        }
    }
    return KY_OK;
}

static int bcast_rounds(struct kyi_shm *s, struct kyi_team *t, struct kyi_coll_plan *pl)
{
    size_t b = pl->shm_n;
    char *buf = pl->shm_r;
    int root = pl->shm_root;
    if (s->cma_min && b >= s->cma_min) return bcast_cma(s, t, pl);
    for (size_t off = 0; off < b; off += s->slot) {
        size_t m = b - off < s->slot ? b - off : s->slot;
        uint64_t rd = s->rounds++;
        if (s->me == root) memcpy(slot(s, rd, root), buf + off, m);
        arrive(s, t, pl->call); /* everybody arrives: the root may reuse the area two rounds on */
        if (s->me != root) memcpy(buf + off, slot(s, rd, root), m);
    }
    return KY_OK;
}

/* The hooks (hier.c's plans) run on this member's turn in the queue, so in start order on every member;
 * the collective runs even when `before` failed, or the other members would wait in it forever. */
static int run_one(struct kyi_coll_plan *pl)
{
    struct kyi_team *t = pl->team;
    struct kyi_shm *s = t->shm;
    int st = pl->before ? pl->before(pl->hook_arg) : KY_OK, c = KY_OK;
    switch (pl->shm_kind) {
        case KYI_SHM_ALLREDUCE:
            reduce_rounds(s, t, pl, -1);
            break;
        case KYI_SHM_REDUCE:
            if (s->cma_min && pl->shm_n * kyi_dtype_size(pl->dtype) >= s->cma_min)
                c = reduce_cma(s, t, pl, pl->shm_root);
            else
                reduce_rounds(s, t, pl, pl->shm_root);
            break;
        case KYI_SHM_ALLGATHER:
            c = allgather_rounds(s, t, pl);
            break;
        case KYI_SHM_BCAST:
            c = bcast_rounds(s, t, pl);
            break;
        default:
            arrive(s, t, pl->call);
            break; /* barrier */
    }
    int a = pl->after ? pl->after(pl->hook_arg) : KY_OK;
    return st ? st : c ? c : a;
}

/* Run the started plans queued before (and including) `upto`. */
static void drain(struct kyi_shm *s, struct kyi_coll_plan *upto)
{
    while (s->head) {
        struct kyi_coll_plan *q = s->head;
        s->head = q->shm_next;
        if (!s->head) s->tail = NULL;
        q->shm_next = NULL;
        q->status = run_one(q);
        q->active = 2; /* done; ky_coll_wait collects the status */
        if (q == upto) return;
    }
}

int kyi_shm_start(struct kyi_coll_plan *pl)
{
    if (pl->active)
        return kyi_fail(KY_ERR_STATE, pl->call, "the plan is already started and not yet waited for");
    struct kyi_shm *s = pl->team->shm;
    pl->active = 1;
    pl->status = KY_OK;
    pl->shm_next = NULL;
    if (s->tail)
        s->tail->shm_next = pl;
    else
        s->head = pl;
    s->tail = pl;
    return KY_OK;
}

int kyi_shm_wait(struct kyi_coll_plan *pl)
{
    if (!pl->active) return KY_OK;
    if (pl->active == 1) drain(pl->team->shm, pl);
    pl->active = 0;
    return pl->status;
}
