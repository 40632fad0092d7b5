/* The executor: runs a schedule step by step with MPI_Irecv/MPI_Isend on the team's private communicator
 * (one tag per collective, so several started plans of a team never mix), completing each exchange before
 * the next step. ky_coll_start makes all the progress it can without waiting; waits go through the
 * runtime's waiters (backoff, KY_TIMEOUT) and serve one-sided requests meanwhile when there is no progress
 * thread, so oversubscribed ranks neither spin nor deadlock against a rank waiting on them. */
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/shm.h"
#include "runtime/config.h"

static char dummy[8];

static char *at(struct kyi_coll_plan *pl, int buf, size_t off)
{
    char *b = pl->buf[buf];
    return b ? b + off : dummy;
}

int kyi_plan_scratch(struct kyi_coll_plan *pl)
{
    if (pl->sched.nomem) return kyi_fail(KY_ERR_NOMEM, pl->call, "no memory for the schedule");
    for (int i = 0; i < 2; i++) {
        size_t n = pl->sched.scratch[i];
        if (!n) continue;
        pl->owned[i] = malloc(n);
        if (!pl->owned[i]) return kyi_fail(KY_ERR_NOMEM, pl->call, "no memory for %zu bytes of scratch", n);
        pl->buf[KYI_B_T + i] = pl->owned[i];
    }
    for (int i = 0; i < pl->sched.n; i++) {
        const kyi_step_t *st = &pl->sched.v[i];
        if (st->slen > INT_MAX || st->rlen > INT_MAX)
            return kyi_fail(KY_ERR_UNSUPPORTED, pl->call,
                            "a message of this schedule is over 2 GiB (%zu bytes)",
                            st->slen > st->rlen ? st->slen : st->rlen);
    }
    return KY_OK;
}

void kyi_plan_release(struct kyi_coll_plan *pl)
{
    free(pl->owned[0]);
    free(pl->owned[1]);
    pl->owned[0] = pl->owned[1] = NULL;
    kyi_sched_free(&pl->sched);
}

/* Post the current step's messages (local steps run at once). */
static int post(struct kyi_coll_plan *pl)
{
    const kyi_step_t *st = &pl->sched.v[pl->cur];
    struct kyi_team *t = pl->team;
    size_t es = kyi_dtype_size(pl->dtype);
    kyi_chan_req_init(&pl->req[0]);
    kyi_chan_req_init(&pl->req[1]);
    switch (st->kind) {
        case KYI_STEP_COPY:
            memmove(at(pl, st->rbuf, st->roff), at(pl, st->sbuf, st->soff), st->slen);
            return 0;
        case KYI_STEP_REDUCE:
            kyi_reduce_local(at(pl, st->dbuf, st->doff), at(pl, st->sbuf, st->soff), st->slen / es, pl->dtype,
                             pl->op);
            return 0;
        default:
            break;
    }
    if (st->from >= 0)
        KYI_CHECK(kyi_chan_irecv(pl->call, t->chan, st->from, pl->tag, at(pl, st->rbuf, st->roff), st->rlen,
                                 &pl->req[0]));
    if (st->to >= 0)
        KYI_CHECK(kyi_chan_isend(pl->call, t->chan, st->to, pl->tag, at(pl, st->sbuf, st->soff), st->slen,
                                 &pl->req[1]));
    return 1;
}

/* Advance as far as possible: 1 = done, 0 = waiting on the network, < 0 = error. */
static int advance(struct kyi_coll_plan *pl)
{
    while (pl->cur < pl->sched.n) {
        if (!pl->posted) {
            int r = post(pl);
            if (r < 0) return r;
            if (r == 0) {
                pl->cur++;
                continue;
            }
            pl->posted = 1;
        }
        int got = 0, sent = 0; /* an empty or completed request tests complete */
        KYI_CHECK(kyi_chan_test(pl->call, &pl->req[0], &got));
        KYI_CHECK(kyi_chan_test(pl->call, &pl->req[1], &sent));
        if (!got || !sent) return 0;
        const kyi_step_t *st = &pl->sched.v[pl->cur];
        if (st->reduce && st->rlen)
            kyi_reduce_local(at(pl, st->dbuf, st->doff), at(pl, st->rbuf, st->roff),
                             st->rlen / kyi_dtype_size(pl->dtype), pl->dtype, pl->op);
        pl->posted = 0;
        pl->cur++;
    }
    return 1;
}

/* Plans in flight on the MPI schedules. A wait advances all of them, not only its own: members may wait
 * for their plans in different orders (as with MPI's nonblocking collectives), and a plan whose next step
 * needs a peer that is waiting for another plan must still move. */
static pthread_mutex_t flight_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kyi_coll_plan *flight;

static void flight_remove(struct kyi_coll_plan *pl)
{
    for (struct kyi_coll_plan **pp = &flight; *pp; pp = &(*pp)->flight_next)
        if (*pp == pl) {
            *pp = pl->flight_next;
            pl->flight_next = NULL;
            return;
        }
}

/* Advance pl if no other thread is: 1 done (status set, out of the flight list), 0 not yet. Called with
 * flight_lock held. */
static int try_advance(struct kyi_coll_plan *pl)
{
    if (pl->active != 1) return 1;
    int idle = 0;
    if (!atomic_compare_exchange_strong(&pl->busy, &idle, 1)) return 0;
    int r = advance(pl);
    if (r != 0) {
        if (r < 0) pl->status = r;
        pl->active = 2; /* finished: its own wait collects the status */
        flight_remove(pl);
    }
    atomic_store(&pl->busy, 0);
    return r != 0;
}

/* Advance every plan in flight; 1 when pl is done. */
static int progress_all(struct kyi_coll_plan *pl)
{
    pthread_mutex_lock(&flight_lock);
    for (struct kyi_coll_plan *q = flight, *next; q; q = next) {
        next = q->flight_next;
        if (q != pl) try_advance(q);
    }
    int done = try_advance(pl);
    pthread_mutex_unlock(&flight_lock);
    return done;
}

int kyi_plan_start(struct kyi_coll_plan *pl)
{
    if (pl->shm_kind) return kyi_shm_start(pl);
    if (pl->active)
        return kyi_fail(KY_ERR_STATE, pl->call, "the plan is already started and not yet waited for");
    pl->active = 1;
    pl->cur = 0;
    pl->posted = 0;
    pl->status = KY_OK;
    pl->tag = kyi_team_next_tag(pl->team);
    atomic_store(&pl->busy, 0);
    int r = advance(pl);
    if (r < 0) pl->status = r;
    if (r != 0) {
        pl->active = 2; /* finished inside the start: the status waits for ky_coll_wait */
        return r < 0 ? r : KY_OK;
    }
    pthread_mutex_lock(&flight_lock);
    pl->flight_next = flight;
    flight = pl;
    pthread_mutex_unlock(&flight_lock);
    return KY_OK;
}

int kyi_plan_wait(struct kyi_coll_plan *pl)
{
    if (pl->shm_kind) return kyi_shm_wait(pl);
    if (!pl->active) return KY_OK;
    if (pl->active == 1) {
        /* First poll and yield for KY_COLL_YIELD_US even on an oversubscribed host: a collective's peers
         * are usually microseconds away, and the waiter's sleeps (tens of microseconds each) would
         * multiply by the number of steps. Yielding hands the core to a peer that needs it (only when
         * ranks outnumber cores: otherwise the yield's syscall is pure latency). */
        static long yield_us = -1;
        if (yield_us < 0) yield_us = kyi_setting_long(KYI_SET_COLL_YIELD_US);
        uint64_t until = kyi_now_ns() + (uint64_t)(yield_us > 0 ? yield_us : 0) * 1000ull;
        int done = 0;
        while (!done && kyi_now_ns() < until) {
            done = progress_all(pl);
            if (done) break;
            if (!kyi_progress_threaded()) kyi_progress_poll();
            if (kyi_rt.oversubscribed) sched_yield(); /* else the core is ours: a syscall only adds latency */
        }
        if (!done) {
            kyi_waiter_t w;
            kyi_waiter_init(&w, pl->call, "the other members of the collective", -1);
            for (;;) {
                int before = pl->cur;
                if (progress_all(pl)) break;
                if (pl->cur != before && pl->cur < pl->sched.n) {
                    kyi_waiter_progress(&w);
                    const kyi_step_t *st = &pl->sched.v[pl->cur];
                    int peer = st->from >= 0 ? st->from : st->to;
                    w.peer = peer >= 0 ? pl->team->world[peer] : -1;
                    w.what = "its part of the collective";
                }
                if (!kyi_progress_threaded() && kyi_progress_poll() > 0) continue;
                kyi_waiter_pause(&w);
            }
        }
    }
    pl->active = 0;
    return pl->status;
}

int kyi_plan_run(struct kyi_coll_plan *pl)
{
    int st = kyi_plan_scratch(pl);
    if (!st) st = kyi_plan_start(pl);
    if (!st) st = kyi_plan_wait(pl);
    kyi_plan_release(pl);
    return st;
}

int kyi_allreduce_min_i64(struct kyi_team *t, int64_t *v, size_t n, const char *call)
{
    struct kyi_coll_plan pl;
    memset(&pl, 0, sizeof pl);
    pl.team = t;
    pl.call = call;
    pl.dtype = KY_INT64;
    pl.op = KY_MIN;
    pl.buf[KYI_B_R] = v;
    pl.algo = kyi_sched_allreduce(&pl.sched, KY_ALGO_RD, t->size, t->rank, n, 8, 1);
    return kyi_plan_run(&pl);
}
