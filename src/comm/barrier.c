/* The split-phase barrier: notify completes this rank's outstanding operations and enters a non-blocking
 * barrier of the MPI transport (mpi/barrier_mpi.c); wait and try complete it. One barrier per rank may be
 * in flight. */
#include "comm/comm.h"
#include "comm/transport.h"
#include "runtime/trace.h"

static pthread_mutex_t bar_lock = PTHREAD_MUTEX_INITIALIZER;
static int bar_active;

int ky_barrier_notify(void)
{
    static const char *call = "ky_barrier_notify";
    KYI_CHECK(kyi_require_init(call));
    pthread_mutex_lock(&bar_lock);
    int active = bar_active;
    pthread_mutex_unlock(&bar_lock);
    if (active) return kyi_fail(KY_ERR_STATE, call, "a barrier is already notified and not yet waited for");
    KYI_CHECK(ky_quiet());
    pthread_mutex_lock(&bar_lock);
    int st = KY_OK;
    if (bar_active) {
        st = kyi_fail(KY_ERR_STATE, call, "another thread notified concurrently");
    } else {
        kyi_hb_release(KYI_HB_BARRIER); /* comm.h: this thread's accesses precede what is served after it */
        st = kyi_mpi_barrier_start(call);
        if (!st) bar_active = 1;
    }
    pthread_mutex_unlock(&bar_lock);
    return st;
}

static int bar_test(const char *call, int *done)
{
    pthread_mutex_lock(&bar_lock);
    if (!bar_active) {
        pthread_mutex_unlock(&bar_lock);
        return kyi_fail(KY_ERR_STATE, call, "no barrier was notified");
    }
    int st = kyi_mpi_barrier_test(call, done);
    if (!st && *done) {
        bar_active = 0;
        kyi_hb_acquire(KYI_HB_BARRIER); /* comm.h: what the engine served before the barrier is done */
    }
    pthread_mutex_unlock(&bar_lock);
    return st;
}

int ky_barrier_try(void)
{
    static const char *call = "ky_barrier_try";
    KYI_CHECK(kyi_require_init(call));
    if (!kyi_comm.progress_thread) kyi_progress_poll();
    int done = 0;
    KYI_CHECK(bar_test(call, &done));
    return done ? KY_OK : KY_PENDING;
}

int ky_barrier_wait(void)
{
    static const char *call = "ky_barrier_wait";
    KYI_CHECK(kyi_require_init(call));
    kyi_waiter_t w;
    kyi_waiter_init(&w, call, "every rank to notify the barrier", -1);
    for (;;) {
        int done = 0;
        KYI_CHECK(bar_test(call, &done));
        if (done) return KY_OK;
        if (!kyi_comm.progress_thread && kyi_progress_poll() > 0) continue;
        kyi_waiter_pause(&w);
    }
}

int ky_comm_barrier(void)
{
    uint64_t t0 = KYI_TRACE_T0();
    int st = ky_barrier_notify();
    if (st == KY_OK) st = ky_barrier_wait();
    KYI_TRACE_SPAN("comm", "ky_comm_barrier", t0, -1, -1);
    return st;
}
