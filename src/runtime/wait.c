/* Waiting without melting down when ranks outnumber cores (4 ranks and their progress threads on 2 cores in
 * CI): spin only when the host has a core per busy thread, then yield (200 ms, or KY_POLL_YIELD_US when
 * oversubscribed), then sleep with a growing interval capped by KY_POLL_SLEEP_MAX_US. Every wait is
 * bounded by KY_TIMEOUT and ends the job with a message. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "runtime/config.h"
#include "runtime/log.h"
#include "runtime/runtime.h"

uint64_t kyi_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Spin budgets in ns. A waiter with a core to itself spins (then yields) long, because sleeping between
 * polls throttles MPI transfers that only progress while someone polls; the progress engine spins without
 * end by default. Oversubscribed hosts never spin. */
/* The settings below are read once, by whichever waiting thread comes first (the progress thread and the
 * program's threads wait at once): relaxed atomics, since any of the racing readers computes the same value.
 */
static uint64_t spin_ns(int engine, int program_only)
{
    static long cached[2] = {KYI_CONFIG_UNREAD, KYI_CONFIG_UNREAD};
    long c = kyi_setting_long_once(engine ? KYI_SET_PROGRESS_SPIN_US : KYI_SET_POLL_SPIN_US, &cached[engine]);
    /* A program-only wait spins 10 us at most, then yields (below): on a host shared with other work a node
     * barrier spinning 20 ms kept the core from the rank it waited for (NPB CG class W, 2 ranks on 2 busy
     * cores: 0.38-0.89 s, 0.15 s yielding), and NPB SP's 9.7 million barriers (class A, 16 ranks) want the
     * wake-up of a spin, not of a system call. */
    if (c < 0)
        c = engine         ? (kyi_rt.cores_busy ? 0 : -1)
            : program_only ? (kyi_rt.threads_fit ? 10 : 0)
                           : (kyi_rt.oversubscribed ? 0 : 20000);
    return c < 0 ? UINT64_MAX : (uint64_t)c * 1000ull;
}

static long sleep_cap_us(void)
{
    static long cached = KYI_CONFIG_UNREAD;
    long c = kyi_setting_long_once(KYI_SET_POLL_SLEEP_MAX_US, &cached);
    return c < 1 ? 1 : c;
}

static double timeout_s(void)
{
    static _Atomic double cached = -1;
    double c = atomic_load_explicit(&cached, memory_order_relaxed);
    if (c < 0) {
        c = kyi_setting_double(KYI_SET_TIMEOUT);
        atomic_store_explicit(&cached, c, memory_order_relaxed);
    }
    return c;
}

void kyi_waiter_init(kyi_waiter_t *w, const char *call, const char *what, int peer)
{
    w->start_ns = kyi_now_ns();
    w->first_ns = w->start_ns;
    w->next_check_ns = w->start_ns;
    w->rounds = 0;
    w->call = call;
    w->what = what;
    w->peer = peer;
    w->program_only = 0;
    w->spin_left = 0;
}

void kyi_waiter_init_program(kyi_waiter_t *w, const char *call, const char *what)
{
    kyi_waiter_init(w, call, what, -1);
    w->program_only = 1;
}

void kyi_waiter_progress(kyi_waiter_t *w)
{
    w->rounds = 0;
    w->spin_left = 0;
    w->start_ns = kyi_now_ns();
}

int kyi_waiter_pause(kyi_waiter_t *w)
{
    /* Inside the spin phase the clock is read once per 32 pauses: a clock read per poll was 9% of NPB SP's
     * profile (node barriers), and a waiter overshoots its spin by 32 pauses at most. */
    if (w->spin_left > 0) {
        w->spin_left--;
        w->rounds++;
#if defined(__x86_64__)
        __builtin_ia32_pause();
#endif
        return 0;
    }
    uint64_t now = kyi_now_ns();
    uint64_t waited = now - w->start_ns;
    w->rounds++;
    if (w->call && now >= w->next_check_ns) { /* call == NULL: the idle engine, which may wait forever */
        double timeout = timeout_s();
        if (timeout > 0 && now - w->first_ns > (uint64_t)(timeout * 1e9)) {
            double t = (now - w->first_ns) / 1e9;
            if (w->peer >= 0)
                kyi_fatal(
                    "rank %d: %s: timed out after %.0f s waiting for %s of rank %d (KY_TIMEOUT=%g); that "
                    "rank may have died, hung, or not made the matching call",
                    kyi_rt.rank, w->call, t, w->what, w->peer, timeout);
            kyi_fatal(
                "rank %d: %s: timed out after %.0f s waiting for %s (KY_TIMEOUT=%g); a rank may have died, "
                "hung, or not made the matching call",
                kyi_rt.rank, w->call, t, w->what, timeout);
        }
        w->next_check_ns = now + 10000000ull; /* look at the clock budget every 10 ms */
    }
    uint64_t spin = spin_ns(w->call == NULL, w->program_only);
    if (waited < spin) {
        w->spin_left = 31;
#if defined(__x86_64__)
        __builtin_ia32_pause();
#endif
        return 0;
    }
    /* Yield before sleeping, oversubscribed too: the thread we wait for may be the next one on this core,
     * and yielding hands it the core at once, while the shortest sleep costs the kernel's timer slack
     * (50 us by default): a barrier of 4 ranks on 2 cores took 130-150 us sleeping, 3-4 us yielding. */
    static long yield_cached = KYI_CONFIG_UNREAD;
    long yield_us = kyi_setting_long_once(KYI_SET_POLL_YIELD_US, &yield_cached);
    /* A program thread with a core of its own yields long; the idle engine, once it stops spinning (a
     * finite KY_PROGRESS_SPIN_US, or the cores are busy), yields briefly and sleeps: yielding in a loop for
     * 200 ms after every request kept it on a core the program's threads needed. */
    int crowded = w->program_only ? !kyi_rt.threads_fit : kyi_rt.oversubscribed;
    int short_yield = crowded || (w->call == NULL && spin != UINT64_MAX);
    uint64_t yield = short_yield ? (uint64_t)yield_us * 1000ull : 200000000ull;
    if (waited < spin + yield) {
        sched_yield();
        return 0;
    }
    /* Sleep 1, 2, 4, ... us up to the cap, so the thread that has work (maybe on this very core) runs. */
    long cap = sleep_cap_us();
    unsigned shift = w->rounds / 8;
    long us = shift > 20 ? cap : (1L << shift);
    if (us > cap) us = cap;
    struct timespec ts = {0, us * 1000L};
    nanosleep(&ts, NULL);
    return us == cap;
}
