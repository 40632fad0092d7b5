/* Internal: KY_TRACE timelines. With KY_TRACE=FILE every rank records spans (category, name, begin, end,
 * track, size, peer) in per-thread buffers; at ky_finalize rank 0 gathers them and writes one Chrome trace
 * JSON file (Perfetto, chrome://tracing): a process per rank, a track per thread and per GPU stream, times of
 * day aligned on rank 0's clock (offsets measured by ping-pong at ky_init). Off, a span costs one load of
 * kyi_trace_on and a branch. Any layer may record; the names must be string literals (kept by pointer).
 * Built with -DKY_TRACE_SPANS=OFF (KYI_TRACE_OFF) the spans are compiled out: the A/B of their cost. */
#ifndef KYI_RUNTIME_TRACE_H
#define KYI_RUNTIME_TRACE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

extern int kyi_trace_on;

enum { KYI_TRACK_THREAD = -1, KYI_TRACK_GPU = 1000 };

/* Nanoseconds of the time of day (CLOCK_REALTIME) on this rank; aligned to rank 0 when written. */
uint64_t kyi_trace_now(void);
/* Record [t0, t1) on `track` (KYI_TRACK_THREAD: the calling thread's; KYI_TRACK_GPU + k: GPU stream k). */
void kyi_trace_event(const char *cat, const char *name, uint64_t t0, uint64_t t1, int track, int64_t n,
                     int peer);
/* Name a track of this rank (GPU streams; threads are named by themselves). */
void kyi_trace_track_name(int track, const char *name);

#ifdef KYI_TRACE_OFF
#define KYI_TRACE_ON 0
#else
#define KYI_TRACE_ON kyi_trace_on
#endif
#define KYI_TRACE_T0() (KYI_TRACE_ON ? kyi_trace_now() : 0)
#define KYI_TRACE_SPAN(cat, name, t0, n, peer)                                                    \
    do {                                                                                          \
        if (KYI_TRACE_ON)                                                                         \
            kyi_trace_event((cat), (name), (t0), kyi_trace_now(), KYI_TRACK_THREAD, (n), (peer)); \
    } while (0)

/* Collective (runtime init / finalize): agree whether tracing is on, measure clock offsets; gather and write.
 */
int kyi_trace_init(void);
void kyi_trace_finalize(void);

#ifdef __cplusplus
}
#endif

#endif
