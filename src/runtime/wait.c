/* Waiting without melting down when ranks outnumber cores (4 ranks and their progress threads on 2 cores in
 * CI): spin only when the host has a core per busy thread, then yield, then sleep with a growing interval
 * capped by KY_POLL_SLEEP_MAX_US. Every wait is bounded by KY_TIMEOUT and ends the job with a message. */
#define _GNU_SOURCE
#include <sched.h>
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

static long spin_us(void)
{
    static long cached = -2;
    if (cached == -2) {
        long v = kyi_config_long("KY_POLL_SPIN_US");
        cached = v >= 0 ? v : (kyi_rt.oversubscribed ? 0 : 100);
    }
    return cached;
}

void kyi_waiter_init(kyi_waiter_t *w, const char *call, const char *what, int peer)
{
    w->start_ns = kyi_now_ns();
    w->next_check_ns = w->start_ns;
    w->rounds = 0;
    w->call = call;
    w->what = what;
    w->peer = peer;
}

void kyi_waiter_progress(kyi_waiter_t *w)
{
    w->rounds = 0;
    w->start_ns = kyi_now_ns();
}

void kyi_waiter_pause(kyi_waiter_t *w)
{
    uint64_t now = kyi_now_ns();
    uint64_t waited = now - w->start_ns;
    w->rounds++;
    if (w->call && now >= w->next_check_ns) { /* call == NULL: an idle engine, which may wait forever */
        double timeout = kyi_config_double("KY_TIMEOUT");
        if (timeout > 0 && waited > (uint64_t)(timeout * 1e9)) {
            if (w->peer >= 0)
                kyi_fatal("rank %d: %s: timed out after %.0f s waiting for %s of rank %d (KY_TIMEOUT=%g); that "
                          "rank may have died, hung, or not made the matching call",
                          kyi_rt.rank, w->call, waited / 1e9, w->what, w->peer, timeout);
            kyi_fatal("rank %d: %s: timed out after %.0f s waiting for %s (KY_TIMEOUT=%g); a rank may have died, "
                      "hung, or not made the matching call",
                      kyi_rt.rank, w->call, waited / 1e9, w->what, timeout);
        }
        w->next_check_ns = now + 10000000ull; /* look at the clock budget every 10 ms */
    }
    if (waited < (uint64_t)spin_us() * 1000ull) {
#if defined(__x86_64__)
        __builtin_ia32_pause();
#endif
        return;
    }
    if (w->rounds < 64 && !kyi_rt.oversubscribed) {
        sched_yield();
        return;
    }
    /* Sleep 1, 2, 4, ... us up to the cap; when oversubscribed start sleeping at once so that the thread
     * that has work (maybe on this very core) runs. */
    long cap = kyi_config_long("KY_POLL_SLEEP_MAX_US");
    unsigned shift = w->rounds > 64 ? (w->rounds - 64) / 8 : 0;
    long us = shift > 20 ? cap : (1L << shift);
    if (us > cap) us = cap;
    if (us < 1) us = 1;
    struct timespec ts = {0, us * 1000L};
    nanosleep(&ts, NULL);
}
