/* The progress engine: serves what arrives for this rank (remote puts/gets on its segments, active
 * messages) through each transport's progress callback: MPI's always (mpi/progress_mpi.c), the extra
 * transport's when one is in use. It runs on a dedicated thread (KY_PROGRESS_THREAD=1, the default) so that
 * remote accesses complete while the target computes, and otherwise inside Kyoyu's own waits and ky_poll.
 * Idle polling backs off (runtime/wait.c) so oversubscribed ranks do not melt down. */
#include <sched.h>

#include "comm/comm.h"
#include "comm/mpi/mpi.h"
#include "comm/transport.h"

static pthread_t progress_thr;
static pthread_mutex_t poll_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int in_engine;

/* Requests handled, or -1 when the MPI loop read a STOP. */
static int poll_once(void)
{
    int n = kyi_tp_mpi.progress();
    /* MPI's progress on this thread may have filled another thread's receive buffer (a large get's reply),
     * whose MPI_Test then completes it and acquires KYI_HB_REPLY: MPI's own ordering is invisible to TSan */
    kyi_hb_release(KYI_HB_REPLY);
    if (n < 0) return n;
    if (kyi_tp_extra) n += kyi_tp_extra->progress();
    return n;
}

int kyi_progress_poll(void)
{
    if (in_engine) { /* a handler waiting must not re-enter the engine; the transports still move bytes */
        kyi_tp_background();
        return 0;
    }
    if (pthread_mutex_trylock(&poll_lock)) return 0;
    in_engine = 1;
    int n = poll_once();
    in_engine = 0;
    pthread_mutex_unlock(&poll_lock);
    return n < 0 ? 0 : n;
}

void kyi_progress_hb_sync(void)
{
#ifdef KYI_TSAN
    if (in_engine) return; /* the engine's own thread (or a poller holding its lock) */
    /* a try-lock: TSan draws no lock-order edge for it, and a blocking lock here (the caller may hold a
     * DSM read lock that the engine's handlers take too) made it report an inversion no build without
     * TSan has, this function being empty there */
    while (pthread_mutex_trylock(&poll_lock)) sched_yield();
    pthread_mutex_unlock(&poll_lock);
#endif
}

static int locked_poll(void)
{
    pthread_mutex_lock(&poll_lock);
    int n = poll_once();
    pthread_mutex_unlock(&poll_lock);
    return n;
}

/* Longest sleeps in a row before the engine sleeps on its doorbell: 10 x KY_POLL_SLEEP_MAX_US (2 ms by
 * default) without a request, so a burst of requests is served by the polls. */
enum { NAPS_BEFORE_BELL = 10 };

static void *progress_main(void *arg)
{
    (void)arg;
    kyi_waiter_t w;
    kyi_waiter_init(&w, NULL, "requests", -1);
    in_engine = 1;
    int naps = 0;
    for (;;) {
        int n = locked_poll();
        if (n < 0) break;
        if (n > 0) {
            kyi_waiter_progress(&w);
            naps = 0;
            continue;
        }
        if (naps >= NAPS_BEFORE_BELL && kyi_bell_ready() && kyi_progress_deferred() == 0) {
            /* bell.c: say we sleep, look once more, sleep until a ring or the timeout; then poll again
             * from the start of the wait (short sleeps first) */
            uint32_t seen = kyi_bell_arm();
            n = locked_poll();
            int rung = 0;
            if (n == 0)
                rung = kyi_bell_wait(seen);
            else
                kyi_bell_disarm();
            if (n < 0) break;
            /* a timeout changed nothing: straight back to the bell after one poll (each ramp of short polls
             * is some 70 wake-ups: SP 16 x 1 took 32.9 s with a ramp after every timeout, 25.5 s with 5 ms
             * polls); a ring or a request starts the short polls again */
            if (n > 0 || rung) {
                kyi_waiter_progress(&w);
                naps = 0;
            }
            continue;
        }
        naps = kyi_waiter_pause(&w) ? naps + 1 : 0;
    }
    /* Drain replies still in flight before the thread ends. */
    while (kyi_progress_deferred() > 0) kyi_waiter_pause(&w);
    return NULL;
}

int kyi_progress_start(void)
{
    if (!kyi_comm.progress_thread) return KY_OK;
    if (pthread_create(&progress_thr, NULL, progress_main, NULL))
        return kyi_fail(KY_ERR_SYSTEM, "ky_init", "cannot start the progress thread");
    return KY_OK;
}

int kyi_progress_stop(void)
{
    if (kyi_comm.progress_thread) {
        kyi_mpi_stop_thread();
        pthread_join(progress_thr, NULL);
    } else {
        kyi_progress_poll();
        kyi_waiter_t w;
        kyi_waiter_init(&w, "ky_finalize", "replies in flight", -1);
        while (kyi_progress_deferred() > 0) kyi_waiter_pause(&w);
    }
    kyi_mpi_poll_free();
    return KY_OK;
}
